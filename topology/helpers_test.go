package topology

// meshMembers returns n mesh members of one group, as sim sorts them.
func meshMembers(n int) []Member {
	out := make([]Member, n)
	for i := range out {
		out[i] = Member{Group: "nodes", Instance: i, Role: RoleNode}
	}
	return out
}
