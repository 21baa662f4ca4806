//go:build !amd64 || purego

package gemm

func archTestSets() []*kernelSet { return nil }

func archNote() string { return "no assembly in this build" }
