package main

import "github.com/emberml/ember/backend/cuda"

func init() {
	kernelCacheDir = func() string {
		dir, err := cuda.KernelCacheDir()
		if err != nil {
			return "unavailable: " + err.Error()
		}
		return dir
	}
}
