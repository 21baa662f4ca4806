package linalg_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/linalg"
)

// Solve a linear system, and invert the matrix.
func ExampleSolve() {
	a := ember.FromSlice([]float64{3, 1, 1, 2}, ember.Shape{2, 2})
	b := ember.FromSlice([]float64{9, 8}, nil) // a vector: x has b's form
	x := linalg.Solve(a, b)
	fmt.Printf("%.4g\n", x.Float64s())
	fmt.Printf("%.4g\n", linalg.Inv(a).MatMul(b).Float64s())
	fmt.Printf("%.4g\n", linalg.Det(a).Item())
	// Output:
	// [2 3]
	// [2 3]
	// 5
}

// The singular values of a matrix, and its reconstruction from its SVD.
func ExampleSVD() {
	a := ember.FromSlice([]float64{3, 0, 0, 0, -2, 0}, ember.Shape{2, 3})
	u, s, vh := linalg.SVD(a, false)
	fmt.Println(s.Float64s())
	fmt.Println(u.Shape(), vh.Shape())
	back := u.Mul(s.Unsqueeze(0)).MatMul(vh)
	fmt.Println(ember.AllClose(back, a, 1e-12, 1e-12))
	// Output:
	// [3 2]
	// [2, 2] [2, 3]
	// true
}
