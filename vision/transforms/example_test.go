package transforms_test

import (
	"fmt"

	"github.com/emberml/ember/vision/imageio"
	"github.com/emberml/ember/vision/transforms"
)

// torchvision's evaluation preprocessing: Resize(256), CenterCrop(224),
// ToTensor, Normalize.
func ExampleImageNetEval() {
	img, err := imageio.Open("../../testdata/vision/sample.jpg") // 320×240
	if err != nil {
		fmt.Println(err)
		return
	}
	pre := transforms.ImageNetEval(256, 224, [3]float64{0.485, 0.456, 0.406}, [3]float64{0.229, 0.224, 0.225})
	x := pre.Apply(img, nil)
	fmt.Println(transforms.ResizedSize(320, 240, 256))
	fmt.Println(x.Shape())
	// Output:
	// 341 256
	// [3, 224, 224]
}
