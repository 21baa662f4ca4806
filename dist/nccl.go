package dist

import (
	"errors"
	"time"
)

func newNCCL(g *ProcessGroup, deadline time.Time) (groupImpl, error) {
	return nil, errors.New("dist: nccl: not implemented yet")
}
