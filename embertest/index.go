package embertest

import "github.com/emberml/ember"

// indexOp runs the fixture ops of testdata/fixtures/index.json (issue 13's
// indexing, scan, sort and structural ops).
func indexOp(c Case, in []*ember.Tensor) ([]*ember.Tensor, bool) {
	one := func(t *ember.Tensor) []*ember.Tensor { return []*ember.Tensor{t} }
	two := func(a, b *ember.Tensor) []*ember.Tensor { return []*ember.Tensor{a, b} }
	x := in[0]
	arg := func(i int) *ember.Tensor { return in[i] }
	switch c.Op {
	case "gather":
		return one(x.Gather(c.intArg("dim"), arg(1))), true
	case "scatter":
		return one(x.Scatter(c.intArg("dim"), arg(1), arg(2))), true
	case "scatter_add":
		return one(x.ScatterAdd(c.intArg("dim"), arg(1), arg(2))), true
	case "index_select":
		return one(x.IndexSelect(c.intArg("dim"), arg(1))), true
	case "index_add":
		return one(x.IndexAdd(c.intArg("dim"), arg(1), arg(2))), true
	case "masked_fill":
		return one(x.MaskedFill(arg(1), c.floatArg("value"))), true
	case "where_scalar_x":
		return one(ember.WhereScalar(x, c.floatArg("scalar"), arg(1))), true
	case "where_scalar_y":
		return one(ember.WhereTensorScalar(x, arg(1), c.floatArg("scalar"))), true
	case "where_scalars":
		return one(ember.WhereScalars(x, c.floatArg("a"), c.floatArg("b"))), true
	case "tril":
		return one(x.Tril(c.intArg("diagonal"))), true
	case "triu":
		return one(x.Triu(c.intArg("diagonal"))), true
	case "cumsum":
		return one(x.Cumsum(c.intArg("dim"))), true
	case "cumprod":
		return one(x.Cumprod(c.intArg("dim"))), true
	case "sort":
		return two(x.Sort(c.intArg("dim"), c.boolArg("descending"))), true
	case "argsort":
		return one(x.Argsort(c.intArg("dim"), c.boolArg("descending"))), true
	case "topk":
		return two(x.TopK(c.intArg("k"), c.intArg("dim"), c.boolArg("largest"), true)), true
	case "one_hot":
		return one(ember.OneHot(x, c.intArg("num_classes"))), true
	case "repeat":
		return one(x.Repeat(intList(c.arg("reps"))...)), true
	case "roll":
		return one(x.Roll(intList(c.arg("shifts")), intList(c.arg("dims")))), true
	case "outer":
		return one(ember.Outer(x, arg(1))), true
	case "bmm":
		return one(ember.Bmm(x, arg(1))), true
	case "baddbmm":
		return one(ember.Baddbmm(x, arg(1), arg(2), c.floatArg("beta"), c.floatArg("alpha"))), true
	case "einsum":
		eq, _ := c.Args["equation"].(string)
		return one(ember.Einsum(eq, in...)), true
	}
	return nil, false
}

func init() {
	m := UnsupportedOn[ember.Meta.Type]
	if m == nil {
		m = map[string]string{}
		UnsupportedOn[ember.Meta.Type] = m
	}
	m["one_hot_infer"] = "one_hot with num_classes -1 takes its shape from the data, which meta tensors lack (as in PyTorch)"
}
