package smi

import (
	"errors"
	"fmt"
	"strings"

	"github.com/emberml/ember/internal/cuda/libpath"
	"github.com/emberml/ember/internal/cuda/nvml"
)

// NoDriverMessage is what nvidia-smi prints when NVML finds no driver.
const NoDriverMessage = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. " +
	"Make sure that the latest NVIDIA driver is installed and running."

// Diagnose turns an error from OpenNVML or Snapshot into the text nvidia-smi
// would print and the exit status it would use: the NVML code (9 for a
// missing driver), NVML_ERROR_LIBRARY_NOT_FOUND (12) when libnvidia-ml.so.1
// cannot be found, NVML_ERROR_FUNCTION_NOT_FOUND (13) for a library too old
// for a required function, 1 otherwise. Statuses above 255 become 255.
func Diagnose(err error) (msg string, code int) {
	var nf *libpath.NotFoundError
	var se *libpath.SymbolError
	var ne *nvml.Error
	switch {
	case err == nil:
		return "", 0
	case errors.As(err, &nf):
		var b strings.Builder
		fmt.Fprintf(&b, "%s not found: NVML ships with the NVIDIA driver (Debian: libnvidia-ml1).\n", nvml.LibName)
		b.WriteString("Searched:\n")
		for _, d := range nf.Searched {
			fmt.Fprintf(&b, "  %s\n", d)
		}
		b.WriteString("  the dynamic linker's default paths\n")
		for _, t := range nf.Tried {
			fmt.Fprintf(&b, "Could not load: %s\n", t)
		}
		b.WriteString("Set EMBER_CUDA_LIB_DIR to the folder that holds it.")
		return b.String(), int(nvml.ErrorLibraryNotFound)
	case errors.As(err, &se):
		return fmt.Sprintf("%s (%s) lacks %s: the driver is too old for ember smi", se.Lib, se.Path, se.Symbol),
			int(nvml.ErrorFunctionNotFound)
	case errors.As(err, &ne):
		detail := fmt.Sprintf("%s returned %s (%d)", ne.Call, ne.Name, int32(ne.Code))
		if ne.Desc != "" {
			detail += ": " + ne.Desc
		}
		code = int(ne.Code)
		if code > 255 || code <= 0 {
			code = 255
		}
		switch {
		case ne.Code == nvml.ErrorDriverNotLoaded:
			return NoDriverMessage + "\n" + detail, code
		case ne.Call == "nvmlInit_v2":
			reason := ne.Desc
			if ne.Code == nvml.ErrorLibRMVersionMismatch {
				reason = "Driver/library version mismatch"
			}
			return "Failed to initialize NVML: " + reason + "\n" + detail, code
		}
		return err.Error(), code
	}
	return err.Error(), 1
}
