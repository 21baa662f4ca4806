package main

import (
	"fmt"

	"github.com/emberml/ember/internal/cuda/cublas"
	"github.com/emberml/ember/internal/cuda/nvml"
	"github.com/emberml/ember/internal/cuda/nvrtc"
)

// libsInfo is the other NVIDIA libraries ember opens at run time: the kernel
// compiler, the BLAS and the management library, and the kernel cache.
type libsInfo struct {
	NVRTC       libStatus `json:"nvrtc"`
	CUBLAS      libStatus `json:"cublas"`
	NVML        libStatus `json:"nvml"`
	KernelCache string    `json:"kernel_cache"`
}

type libStatus struct {
	Found   bool   `json:"found"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

func collectLibs() libsInfo {
	var li libsInfo
	if path, _, err := nvrtc.Library(); err != nil {
		li.NVRTC.Error = err.Error()
	} else {
		li.NVRTC = libStatus{Found: true, Path: path}
		if maj, min, err := nvrtc.Version(); err == nil {
			li.NVRTC.Version = fmt.Sprintf("%d.%d", maj, min)
		}
	}
	if path, err := cublas.Library(); err != nil {
		li.CUBLAS.Error = err.Error()
	} else {
		li.CUBLAS = libStatus{Found: true, Path: path}
		if maj, min, patch, err := cublas.LibraryVersion(); err == nil {
			li.CUBLAS.Version = fmt.Sprintf("%d.%d.%d", maj, min, patch)
		}
	}
	if l, err := nvml.Open(); err != nil {
		li.NVML.Error = err.Error()
	} else {
		li.NVML = libStatus{Found: true, Path: l.Path()}
	}
	li.KernelCache = kernelCacheDir()
	return li
}

func (l *libsInfo) title() string { return "CUDA libraries (opened at run time)" }

func (l *libsInfo) lines(bool) []infoLine {
	show := func(s libStatus) string {
		if !s.Found {
			return "not found — " + s.Error
		}
		if s.Version != "" {
			return s.Path + " (" + s.Version + ")"
		}
		return s.Path
	}
	ls := []infoLine{
		{"NVRTC", show(l.NVRTC)},
		{"cuBLAS", show(l.CUBLAS)},
		{"NVML", show(l.NVML)},
	}
	if l.KernelCache != "" {
		ls = append(ls, infoLine{"kernel cache", l.KernelCache})
	}
	return ls
}

// kernelCacheDir is set by the CUDA backend's wiring (see info_cuda.go).
var kernelCacheDir = func() string { return "" }
