package cuda

import "github.com/emberml/ember/internal/cuda/driver"

// DriverVersion returns the newest CUDA version the installed driver
// supports, as cuDriverGetVersion reports it ("12.2"): the "CUDA Version"
// nvidia-smi shows. ember is built without a CUDA toolkit, so this is its
// counterpart of torch.version.cuda. It needs libcuda, not a GPU; without
// libcuda it is the error saying where it was looked for.
func DriverVersion() (string, error) {
	d, err := driver.Load()
	if err != nil {
		return "", err
	}
	v, err := d.DriverGetVersion()
	if err != nil {
		return "", err
	}
	return driver.VersionString(v), nil
}
