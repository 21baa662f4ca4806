package backend

// Indexer holds the kernels of the indexing, scan and sort ops (gather,
// scatter, index_select, cumsum, sort, ...). Every Backend implements it.
// Index operands are Int64 views whose values ember has checked to lie in
// range; dim is a dimension of the views (all of one rank).
type Indexer interface {
	// Gather writes dst[p] = src[p with dim replaced by index[p]] for every
	// point p of dst's shape. index has dst's shape (broadcast dims stride
	// 0); src has dst's shape except along dim, where it has its own size.
	Gather(dst, src, index View, dim int)
	// Scatter writes dst[p with dim replaced by index[p]] = src[p] for every
	// point p of index's shape (src has index's shape, broadcast dims
	// stride 0), or adds src[p] there when accumulate is set (numeric
	// dtypes only). dst has index's shape except along dim. Where an index
	// repeats without accumulate, which write wins is unspecified.
	Scatter(dst, index, src View, dim int, accumulate bool)
	// Scan writes the cumulative sum (or product when prod is set) of src
	// along dim into dst (same shape and dtype: Float32, Float64 or Int64),
	// from the end backwards when reverse is set. Float32 accumulates in
	// float64.
	Scan(dst, src View, dim int, prod, reverse bool)
	// Sort sorts every line of src along dim into values (src's dtype) and
	// indices (Int64, the positions in src), stably: equal keys keep their
	// order. NaN sorts as larger than every number (last ascending, first
	// descending).
	Sort(values, indices, src View, dim int, descending bool)
}
