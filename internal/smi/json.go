package smi

import (
	"encoding/json"
	"io"
)

// WriteJSON writes s as indented JSON: sizes in bytes, power in milliwatts,
// and null for what a card does not report.
func WriteJSON(w io.Writer, s *Snapshot) error {
	c := *s
	if c.GPUs == nil {
		c.GPUs = []GPU{}
	}
	if c.Processes == nil {
		c.Processes = []Process{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(&c)
}
