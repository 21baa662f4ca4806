package weights

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Bounds of the unpickler's work and memory, checked by scanPickle before
// the pickle runs. A state dict needs little of each: the pickler batches
// SETITEMS and APPENDS by 1000, and marks nest as deep as the data.
const (
	maxOps   = 1 << 22 // opcodes
	maxStack = 1 << 18 // objects on the stack (the unpickler allocates each)
	maxMarks = 1 << 10 // open MARKs (the unpickler allocates a stack per MARK)
	maxMemo  = 1 << 20 // memo entries
)

// scanPickle walks a pickle's opcode stream without running it and checks
// that every length-prefixed argument and line fits in the bytes that are
// left, so that the unpickler never allocates more than the input holds,
// and that the opcodes, the stack, the open MARKs and the memo stay within
// their bounds (each opcode's stack effect is simulated, as pickletools
// describes it). It accepts protocols 0 to 5 and stops at STOP.
func scanPickle(p []byte) error {
	i := 0
	ops, depth, memo := 0, 0, 0
	var marks []int // depth below each open MARK
	pop := func(n int) {
		depth = max(depth-n, 0)
	}
	popMark := func() {
		if len(marks) > 0 {
			depth = marks[len(marks)-1]
			marks = marks[:len(marks)-1]
		} else {
			depth = 0
		}
	}
	need := func(n uint64) error {
		if n > uint64(len(p)-i) {
			return fmt.Errorf("opcode at %d needs %d bytes, %d left", i, n, len(p)-i)
		}
		return nil
	}
	line := func() error {
		j := bytes.IndexByte(p[i:], '\n')
		if j < 0 {
			return fmt.Errorf("opcode at %d: unterminated line", i)
		}
		i += j + 1
		return nil
	}
	for i < len(p) {
		op := p[i]
		at := i
		i++
		if ops++; ops > maxOps {
			return fmt.Errorf("more than %d opcodes", maxOps)
		}
		switch op {
		case '(':
			if len(marks) >= maxMarks {
				return fmt.Errorf("more than %d nested MARKs at %d", maxMarks, at)
			}
			marks = append(marks, depth)
			depth = 0
		case 't', 'l', 'd', 0x91, 'i', 'o': // pop to MARK, push one
			popMark()
			depth++
		case 'e', 'u', 0x90, '1': // pop to MARK
			popMark()
		case '0', 'a': // pop one
			pop(1)
		case 0x86, 'R', 0x93, 0x81, 'b': // pop two, push one
			pop(2)
			depth++
		case 0x87, 0x92: // pop three, push one
			pop(3)
			depth++
		case 's':
			pop(2)
		case 'p', 'q', 'r', 0x94: // memo stores
			if memo++; memo > maxMemo {
				return fmt.Errorf("more than %d memo entries", maxMemo)
			}
		case '.', 0x80, 0x95, 'Q', 0x85, 0x98: // no net push
		default: // everything else pushes one
			depth++
		}
		if depth > maxStack {
			return fmt.Errorf("more than %d objects on the pickle stack at %d", maxStack, at)
		}
		var n uint64 // fixed argument size, or size of the length prefix
		counted := false
		switch op {
		case '(', '.', '0', '1', '2', 'N', 'Q', 'R', 'a', 'b', 'd', '}', 'e', 'l', ']', 'o', 's', 't', ')', 'u',
			0x81, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8f, 0x90, 0x91, 0x92, 0x93, 0x94, 0x97, 0x98:
			if op == '.' {
				return nil
			}
			continue
		case 'F', 'I', 'L', 'P', 'S', 'V', 'g', 'p':
			if err := line(); err != nil {
				return err
			}
			continue
		case 'c', 'i':
			if err := line(); err != nil {
				return err
			}
			if err := line(); err != nil {
				return err
			}
			continue
		case 'K', 'h', 'q', 0x80, 0x82:
			n = 1
		case 'M', 0x83:
			n = 2
		case 'J', 'j', 'r', 0x84:
			n = 4
		case 'G':
			n = 8
		case 0x95: // FRAME: 8-byte size; the frame's opcodes follow inline
			n = 8
			if err := need(8); err != nil {
				return err
			}
			if size := binary.LittleEndian.Uint64(p[i:]); size > uint64(len(p)-i-8) {
				return fmt.Errorf("frame at %d of %d bytes runs past the end", at, size)
			}
		case 'U', 'C', 0x8a, 0x8c:
			n, counted = 1, true
		case 'T', 'X', 'B', 0x8b:
			n, counted = 4, true
		case 0x8d, 0x8e, 0x96:
			n, counted = 8, true
		default:
			return fmt.Errorf("unknown pickle opcode 0x%02x at %d", op, at)
		}
		if err := need(n); err != nil {
			return err
		}
		if counted {
			var size uint64
			switch n {
			case 1:
				size = uint64(p[i])
			case 4:
				size = uint64(binary.LittleEndian.Uint32(p[i:]))
				if op == 'T' || op == 0x8b { // signed lengths
					if int32(size) < 0 {
						return fmt.Errorf("negative length at %d", at)
					}
				}
			case 8:
				size = binary.LittleEndian.Uint64(p[i:])
			}
			i += int(n)
			if err := need(size); err != nil {
				return err
			}
			i += int(size)
			continue
		}
		i += int(n)
	}
	return fmt.Errorf("pickle ends without STOP")
}
