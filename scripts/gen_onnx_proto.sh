#!/bin/sh
# Regenerates onnx/internal/onnxpb/onnx.pb.go from ONNX's onnx.proto (copied
# from Debian's python3-onnx, ONNX 1.12: /usr/lib/python3/dist-packages/onnx/onnx.proto).
# Needs protoc (Debian's protobuf-compiler) and
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
set -eu
cd "$(dirname "$0")/../onnx/internal/onnxpb"
PATH="$(go env GOPATH)/bin:$PATH" protoc --go_out=. --go_opt=paths=source_relative \
	--go_opt=Monnx.proto=github.com/emberml/ember/onnx/internal/onnxpb onnx.proto
