package imageio

// opaqueGIF returns b with the first frame's transparency flag cleared
// (in a copy), or b itself when it has none or its blocks do not parse.
// Go's GIF decoder replaces the transparent palette entry with
// transparent black, so those pixels decoded as (0, 0, 0); PIL's
// convert("RGB") keeps the palette's colour for them.
func opaqueGIF(b []byte) []byte {
	if len(b) < 13 {
		return b
	}
	pos := 13
	if b[10]&0x80 != 0 { // a global colour table
		pos += 3 << (int(b[10]&7) + 1)
	}
	flag := -1 // offset of the packed byte of the last graphic control extension
	for pos < len(b) {
		switch b[pos] {
		case 0x21: // extension: label, then data sub-blocks
			if pos+1 >= len(b) {
				return b
			}
			p := pos + 2
			if b[pos+1] == 0xF9 && p+1 < len(b) && b[p] == 4 {
				flag = p + 1
			}
			for p < len(b) {
				n := int(b[p])
				p += 1 + n
				if n == 0 {
					break
				}
			}
			pos = p
		case 0x2C: // the first image: the last control extension is its
			if flag < 0 || b[flag]&1 == 0 {
				return b
			}
			c := append([]byte(nil), b...)
			c[flag] &^= 1
			return c
		default:
			return b
		}
	}
	return b
}
