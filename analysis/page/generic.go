package page

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// maxGenericRows bounds the generic listing of one report (a 48-node mesh's JSON has
// thousands of leaves; the page lists the first ones and says how many it left out).
const maxGenericRows = 400

// AllFigures lists every number and string of a source's JSON, one row per path: the
// section of a report kind that draws none of its own, so that a new scenario's report
// appears on the page with every figure it holds.
func (s *Section) AllFigures(src *Source) {
	type leaf struct {
		path string
		v    any
	}
	var leaves []leaf
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(join(path, k), t[k])
			}
		case []any:
			for i, e := range t {
				walk(join(path, strconv.Itoa(i)), e)
			}
		case nil:
		default:
			leaves = append(leaves, leaf{path, v})
		}
	}
	walk("", src.tree)
	var rows [][]Cell
	for i, l := range leaves {
		if i == maxGenericRows {
			break
		}
		switch t := l.v.(type) {
		case json.Number:
			f := Format{Scale: 1}
			if strings.ContainsAny(t.String(), ".eE") {
				f.Decimals = 3
			}
			rows = append(rows, []Cell{T(l.path), F(src.Fig(l.path, f))})
		default:
			rows = append(rows, []Cell{T(l.path), T(fmt.Sprint(t))})
		}
	}
	caption := fmt.Sprintf("%s: every figure of the report's JSON (%d values)", src.Label, len(leaves))
	if len(leaves) > maxGenericRows {
		caption = fmt.Sprintf("%s: the first %d of the report's %d JSON values (all of them are in Data below)", src.Label, maxGenericRows, len(leaves))
	}
	s.Table(caption, []string{"path", "value"}, rows)
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
