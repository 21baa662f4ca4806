package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const tinyModel = "../../tokenizer/testdata/gpt2-tiny"

func runTokenize(t *testing.T, args ...string) (string, error) {
	t.Helper()
	c, _, err := rootCmd.Find([]string{"tokenize"})
	if err != nil {
		t.Fatal(err)
	}
	resetFlags(t, c)
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&out)
	rootCmd.SetArgs(append([]string{"tokenize"}, args...))
	defer rootCmd.SetArgs(nil)
	err = rootCmd.Execute()
	return out.String(), err
}

// TestTokenize: the ids of the Python reference (tokenizer/testdata/cases.json)
// as a JSON array, and --decode back, for both model folder layouts.
func TestTokenize(t *testing.T) {
	b, err := os.ReadFile("../../tokenizer/testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Text       string `json:"text"`
		IDsSpecial []int  `json:"ids_special"`
		IDs        []int  `json:"ids"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{tinyModel, "../../tokenizer/testdata/gpt2-tiny-json"} {
		for _, i := range []int{2, 12} { // contractions; text with <|endoftext|>
			raw, _ := base64.StdEncoding.DecodeString(cases[i].Text)
			text := string(raw)
			want, _ := json.Marshal(cases[i].IDsSpecial)
			out, err := runTokenize(t, "--model", model, text)
			if err != nil || strings.TrimSpace(out) != string(want) {
				t.Fatalf("%s %q: %q, %v; want %s", model, text, out, err, want)
			}
			plain, _ := json.Marshal(cases[i].IDs)
			if out, err := runTokenize(t, "--model", model, "--no-special", text); err != nil || strings.TrimSpace(out) != string(plain) {
				t.Fatalf("--no-special %q: %q, %v; want %s", text, out, err, plain)
			}
			back, err := runTokenize(t, "--model", model, "--decode", string(want))
			if err != nil || back != text+"\n" {
				t.Fatalf("--decode: %q, %v; want %q", back, err, text)
			}
		}
	}
	if out, err := runTokenize(t, "--model", tinyModel, "--decode", "72 101,108"); err != nil || out != "Hel\n" {
		t.Fatalf("--decode of spaced ids: %q, %v", out, err)
	}
}

func TestTokenizeErrors(t *testing.T) {
	empty := t.TempDir()
	for _, args := range [][]string{
		{"x"},                   // no --model
		{"--model", empty, "x"}, // no tokenizer files
		{"--model", filepath.Join(empty, "nope"), "x"},
		{"--model", tinyModel, "--decode", "[1, 99999]"}, // unknown id
		{"--model", tinyModel, "--decode", "one two"},
		{"--model", tinyModel}, // no TEXT
	} {
		if _, err := runTokenize(t, args...); err == nil {
			t.Errorf("ember tokenize %v: no error", args)
		}
	}
}

// TestTokenizeHostilePattern: a tokenizer.json whose Split pattern
// backtracks catastrophically is an error after tokenizer.MatchTimeout,
// not a hang (nor the tokenizer's panic out of the command).
func TestTokenizeHostilePattern(t *testing.T) {
	b, err := os.ReadFile("../../tokenizer/testdata/gpt2-tiny-json/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	tj := strings.Replace(string(b), `"pre_tokenizer": {"type": "ByteLevel"`, `"pre_tokenizer": {"type": "Sequence", "pretokenizers": [`+
		`{"type": "Split", "pattern": {"Regex": "(a+)+$"}, "behavior": "Isolated"}, {"type": "ByteLevel", "add_prefix_space": false}]}, "x": {"type": "ByteLevel"`, 1)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(tj), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runTokenize(t, "--model", dir, strings.Repeat("a", 40)+"!"); err == nil || !strings.Contains(err.Error(), "backtracks") {
		t.Fatalf("%v, want the pattern's timeout", err)
	}
}
