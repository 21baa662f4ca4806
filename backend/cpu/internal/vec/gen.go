package vec

// The AVX2 loops are written in Go with avo (see asm/, a module of its own
// so that avo never becomes a dependency of ember).
//go:generate sh -c "cd asm && go run . -out ../kernels_amd64.s -stubs ../kernels_amd64.go -pkg vec"
