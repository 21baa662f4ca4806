package data_test

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"

	"github.com/emberml/ember/data"
)

func ExampleNewImageFolder() {
	root, _ := os.MkdirTemp("", "folder")
	defer os.RemoveAll(root)
	for _, f := range []string{"dog/1.png", "cat/1.png", "cat/2.png"} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755)
		fh, _ := os.Create(filepath.Join(root, f))
		png.Encode(fh, image.NewGray(image.Rect(0, 0, 4, 3)))
		fh.Close()
	}
	ds, err := data.NewImageFolder(root)
	if err != nil {
		fmt.Println(err)
		return
	}
	x, y := ds.Get(2)
	fmt.Println(ds.Classes, ds.ClassToIdx["dog"], ds.Len())
	fmt.Println(x.Shape(), y.Item())
	// Output:
	// [cat dog] 1 3
	// [3, 3, 4] 1
}
