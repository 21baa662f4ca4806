// Package hub finds and fetches pretrained weights the way PyTorch's and
// Hugging Face's Python libraries do, so files a Python user already has are
// found where they put them:
//
//   - torch.hub's checkpoint cache, $TORCH_HOME/hub/checkpoints (default
//     ~/.cache/torch, or $XDG_CACHE_HOME/torch), with the SHA-256 prefix
//     torchvision writes into its file names (resnet18-f37072fd.pth) checked;
//   - the Hugging Face hub cache, $HF_HOME/hub/models--ORG--NAME/snapshots/REV.
//
// [CachedFile] downloads a missing checkpoint with a progress bar into a
// temporary file next to its final place, resumes an interrupted transfer
// with an HTTP range request, verifies it and only then renames it into the
// cache, so the cache never holds a half-written or unverified file.
// EMBER_OFFLINE=1 (or HF_HUB_OFFLINE=1) forbids the network.
package hub

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// TorchHome is torch.hub's root: $TORCH_HOME, else $XDG_CACHE_HOME/torch,
// else ~/.cache/torch.
func TorchHome() string {
	if d := os.Getenv("TORCH_HOME"); d != "" {
		return d
	}
	return filepath.Join(cacheHome(), "torch")
}

// CheckpointsDir is where torch.hub.load_state_dict_from_url keeps
// downloaded weights: TorchHome()/hub/checkpoints.
func CheckpointsDir() string { return filepath.Join(TorchHome(), "hub", "checkpoints") }

func cacheHome() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache")
}

// Offline reports whether the network is forbidden: EMBER_OFFLINE or
// HF_HUB_OFFLINE set to 1, true, yes or on (any case). It returns the
// variable that said so.
func Offline() (bool, string) {
	for _, v := range []string{"EMBER_OFFLINE", "HF_HUB_OFFLINE"} {
		switch strings.ToLower(os.Getenv(v)) {
		case "1", "true", "yes", "on":
			return true, v
		}
	}
	return false, ""
}

var hashRE = regexp.MustCompile(`-([a-f0-9]*)\.`)

// HashPrefix returns the SHA-256 prefix a torch.hub file name carries, as
// torch.hub's HASH_REGEX finds it ("resnet18-f37072fd.pth" → "f37072fd"),
// or "" when the name has none.
func HashPrefix(name string) string {
	m := hashRE.FindStringSubmatch(filepath.Base(name))
	if m == nil {
		return ""
	}
	return m[1]
}
