package snappystream

// history holds the last windowBytes bytes of a stream direction. It grows as the
// stream does, up to windowBytes, and then wraps: no allocation once full.
type history struct {
	windowBytes int
	buf         []byte // len(buf) == number of history bytes held (h)
	pos         int    // when full, index of the oldest byte; 0 while growing
}

// len returns h, the number of history bytes available to copies.
func (h *history) len() int { return len(h.buf) }

// tail returns the last back bytes of history, oldest first, as up to two slices.
// It assumes 1 <= back <= h.len().
func (h *history) tail(back int) (a, b []byte) {
	start := h.pos + len(h.buf) - back
	if start >= len(h.buf) {
		start -= len(h.buf)
	}
	end := start + back
	if end <= len(h.buf) {
		return h.buf[start:end], nil
	}
	return h.buf[start:], h.buf[:end-len(h.buf)]
}

// byteAt returns the history byte back positions before the end (1 = newest).
func (h *history) byteAt(back int) byte {
	i := h.pos + len(h.buf) - back
	if i >= len(h.buf) {
		i -= len(h.buf)
	}
	return h.buf[i]
}

// push appends p to the history, dropping what falls out of the window.
func (h *history) push(p []byte) {
	w := h.windowBytes
	if w == 0 || len(p) == 0 {
		return
	}
	if len(p) >= w {
		p = p[len(p)-w:]
	}
	if len(h.buf) < w {
		take := min(w-len(h.buf), len(p))
		if len(h.buf)+take > cap(h.buf) {
			c := min(w, max(2*cap(h.buf), len(h.buf)+take, 4096))
			nb := make([]byte, len(h.buf), c)
			copy(nb, h.buf)
			h.buf = nb
		}
		h.buf = append(h.buf, p[:take]...)
		p = p[take:]
		if len(p) == 0 {
			return
		}
	}
	n := copy(h.buf[h.pos:], p)
	if n < len(p) {
		h.pos = copy(h.buf, p[n:])
	} else if h.pos += n; h.pos == len(h.buf) {
		h.pos = 0
	}
}

func (h *history) reset() {
	h.buf = h.buf[:0]
	h.pos = 0
}

// stateBytes is the memory the history holds.
func (h *history) stateBytes() int { return cap(h.buf) }
