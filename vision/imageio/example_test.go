package imageio_test

import (
	"fmt"

	"github.com/emberml/ember/vision/imageio"
)

func ExampleOpen() {
	img, err := imageio.Open("../../testdata/vision/gray.png") // 8-bit grayscale
	if err != nil {
		fmt.Println(err)
		return
	}
	p := img.RGBAAt(0, 0)
	fmt.Println(img.Rect.Dx(), img.Rect.Dy(), p.R == p.G && p.G == p.B) // replicated to RGB
	// Output: 64 48 true
}
