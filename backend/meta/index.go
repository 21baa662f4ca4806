package meta

import "github.com/emberml/ember/backend"

// The indexing kernels do nothing on meta: there is no data.

func (Backend) Gather(_, _, _ backend.View, _ int)          {}
func (Backend) Scatter(_, _, _ backend.View, _ int, _ bool) {}
func (Backend) Scan(_, _ backend.View, _ int, _, _ bool)    {}
func (Backend) Sort(_, _, _ backend.View, _ int, _ bool)    {}
