// Package tbpb holds the protocol buffers TensorBoard's event files carry
// (Event, Summary, HistogramProto, TensorProto), generated from
// tensorboard.proto by gen.sh with protoc-gen-go.
package tbpb
