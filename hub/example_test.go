package hub_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/emberml/ember/hub"
)

// A name that carries a SHA-256 prefix, as torchvision's do.
func ExampleHashPrefix() {
	fmt.Println(hub.HashPrefix("resnet18-f37072fd.pth"))
	fmt.Println(hub.HashPrefix("model.safetensors") == "")
	// Output:
	// f37072fd
	// true
}

// Finding a model a Python user downloaded with huggingface_hub.
func ExampleHFSnapshot() {
	home, _ := os.MkdirTemp("", "hf")
	defer os.RemoveAll(home)
	os.Setenv("HF_HOME", home)
	defer os.Unsetenv("HF_HOME")
	commit := "607a30d783dfa663caf39e06633721c8d4cfcd7e"
	repo := filepath.Join(home, "hub", "models--gpt2")
	os.MkdirAll(filepath.Join(repo, "snapshots", commit), 0o755)
	os.MkdirAll(filepath.Join(repo, "refs"), 0o755)
	os.WriteFile(filepath.Join(repo, "refs", "main"), []byte(commit), 0o644)

	dir, err := hub.HFSnapshot("gpt2")
	if err != nil {
		fmt.Println(err)
		return
	}
	rel, _ := filepath.Rel(home, dir)
	fmt.Println(rel)
	// Output: hub/models--gpt2/snapshots/607a30d783dfa663caf39e06633721c8d4cfcd7e
}
