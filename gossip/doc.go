// Package gossip holds the Ethereum consensus gossip encoding that every other package shares:
// topics and their message categories, the spec's message-id function, and accounting of a
// gossipsub RPC frame's bytes per category.
package gossip
