#!/bin/sh
# Regenerates tensorboard.pb.go. Needs protoc (Debian: protobuf-compiler) and
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@latest
set -e
cd "$(dirname "$0")"
PATH="$(go env GOPATH)/bin:$PATH" protoc --go_out=. --go_opt=paths=source_relative tensorboard.proto
