package snappystream

// window holds the history of a stream direction followed by the block being coded, in
// one contiguous slice: a match or copy that reaches back into earlier blocks is a plain
// slice operation, with no wrap-around. buf[:len(buf)] holds at least the last
// min(windowBytes, stream length) bytes; older bytes are dropped (moved over) only when
// a block does not fit, so that a slide of windowBytes bytes happens once per `slack`
// bytes of stream.
type window struct {
	windowBytes int
	buf         []byte
	// base is the stream coordinate of buf[0] (the encoder's tables hold coordinates).
	base int
}

// slackBytes is the room kept after the history for blocks to come: a slide moves
// windowBytes bytes once per slackBytes of stream (at most 4 bytes moved per byte
// coded, 1 up to 4 MiB windows).
func (w *window) slackBytes() int { return min(max(w.windowBytes, 16<<10), 4<<20) }

// reserve makes room for a block of n bytes after the history and returns its start
// index in buf; the caller appends the block's bytes (append(buf, ...) or extend).
// The check is apart from the slide so that it inlines: most blocks fit.
func (w *window) reserve(n int) int {
	if cap(w.buf)-len(w.buf) >= n {
		return len(w.buf)
	}
	return w.slide(n)
}

// slide drops the bytes before the last windowBytes (or grows buf) to make room for n.
func (w *window) slide(n int) int {
	keep := min(len(w.buf), w.windowBytes)
	drop := len(w.buf) - keep
	if keep+n+w.slackBytes() > cap(w.buf) {
		nb := make([]byte, keep, keep+n+w.slackBytes())
		copy(nb, w.buf[drop:])
		w.buf = nb
	} else {
		w.buf = w.buf[:copy(w.buf, w.buf[drop:])]
	}
	w.base += drop
	return len(w.buf)
}

// histLen returns h for a block starting at index bs: the history bytes a copy may use.
func (w *window) histLen(bs int) int { return min(w.windowBytes, bs) }

func (w *window) reset() {
	w.buf = w.buf[:0]
	w.base = 0
}

// stateBytes is the memory the window holds.
func (w *window) stateBytes() int { return cap(w.buf) }
