package cuda

import (
	"testing"

	"github.com/emberml/ember/internal/cuda/driver"
	"github.com/emberml/ember/internal/testenv"
)

// TestDriverVersion: Debian's libcuda1 (535 series) reports CUDA 12.2,
// with or without a GPU.
func TestDriverVersion(t *testing.T) {
	_, err := driver.Load()
	testenv.NeedLib(t, "libcuda1", err)
	v, err := DriverVersion()
	if err != nil || v != "12.2" {
		t.Fatalf("DriverVersion() = %q, %v; want 12.2", v, err)
	}
}
