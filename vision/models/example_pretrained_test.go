package models_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/emberml/ember/hub"
	"github.com/emberml/ember/vision/models"
)

// Where torchvision's weights are looked for, and what comes with them.
func ExampleLoadPretrained() {
	os.Setenv("TORCH_HOME", "/tmp/example-torch-home")
	os.Setenv("EMBER_OFFLINE", "1") // no download in an example
	defer os.Unsetenv("TORCH_HOME")
	defer os.Unsetenv("EMBER_OFFLINE")

	_, w, err := models.LoadPretrained("resnet18")
	var off *hub.OfflineError
	fmt.Println(errors.As(err, &off), off.Path)
	fmt.Println(w.Name, len(w.Categories), w.Categories[0], w.Preprocess.ResizeSize, w.Preprocess.CropSize)
	// Output:
	// true /tmp/example-torch-home/hub/checkpoints/resnet18-f37072fd.pth
	// ResNet18_Weights.IMAGENET1K_V1 1000 tench 256 224
}
