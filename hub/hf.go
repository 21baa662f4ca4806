package hub

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// HFHome is Hugging Face's root: $HF_HOME, else $XDG_CACHE_HOME/huggingface,
// else ~/.cache/huggingface.
func HFHome() string {
	if d := os.Getenv("HF_HOME"); d != "" {
		return d
	}
	return filepath.Join(cacheHome(), "huggingface")
}

// HFHubCache is the hub cache huggingface_hub writes: $HF_HUB_CACHE (or
// the older $HUGGINGFACE_HUB_CACHE), else HFHome()/hub.
func HFHubCache() string {
	for _, v := range []string{"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"} {
		if d := os.Getenv(v); d != "" {
			return d
		}
	}
	return filepath.Join(HFHome(), "hub")
}

// NotCachedError reports a model absent from the Hugging Face cache.
type NotCachedError struct {
	Repo, Revision, Path string
	Reason               string
}

func (e *NotCachedError) Error() string {
	return fmt.Sprintf("hub: %s (revision %s) is not in the Hugging Face cache: %s (download it with `huggingface-cli download %s`, or set HF_HOME)", e.Repo, e.Revision, e.Reason, e.Repo)
}

// HFRevision selects a branch, tag or commit for HFSnapshot (default "main").
type HFRevision string

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// HFSnapshot returns the snapshot folder of a model in the Hugging Face hub
// cache, HFHubCache()/models--ORG--NAME/snapshots/COMMIT, where COMMIT is
// what refs/REVISION holds (a 40-hex revision is taken as the commit
// itself). repo is "gpt2" or "org/name"; rev is optional ("main").
func HFSnapshot(repo string, rev ...HFRevision) (string, error) {
	r := "main"
	if len(rev) > 0 && rev[0] != "" {
		r = string(rev[0])
	}
	if repo == "" || strings.Contains(repo, "..") || strings.Count(repo, "/") > 1 || strings.HasPrefix(repo, "/") || strings.HasSuffix(repo, "/") {
		return "", fmt.Errorf("hub: %q is not a Hugging Face model id (want NAME or ORG/NAME)", repo)
	}
	if strings.Contains(r, "..") || strings.HasPrefix(r, "/") {
		return "", fmt.Errorf("hub: %q is not a revision", r)
	}
	base := filepath.Join(HFHubCache(), "models--"+strings.ReplaceAll(repo, "/", "--"))
	commit := r
	if !commitRE.MatchString(r) {
		ref := filepath.Join(base, "refs", filepath.FromSlash(r))
		b, err := os.ReadFile(ref)
		if err != nil {
			return "", &NotCachedError{Repo: repo, Revision: r, Path: ref, Reason: "no " + ref}
		}
		commit = strings.TrimSpace(string(b))
		if !commitRE.MatchString(commit) {
			return "", &NotCachedError{Repo: repo, Revision: r, Path: ref, Reason: fmt.Sprintf("%s holds %q, not a commit hash", ref, commit)}
		}
	}
	snap := filepath.Join(base, "snapshots", commit)
	if st, err := os.Stat(snap); err != nil || !st.IsDir() {
		return "", &NotCachedError{Repo: repo, Revision: r, Path: snap, Reason: "no folder " + snap}
	}
	return snap, nil
}
