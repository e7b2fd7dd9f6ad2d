// Package search is a project's standards search engine: a persistent BM25
// index over the markdown in the project's source folders (standards, usage
// guides, workflows), kept current by a file watcher and served as the
// search_standards MCP tool.
//
// # Pipeline
//
// A file is chunked into heading sections (chunk.go: "#".."####", fenced
// code kept in its section, front matter as metadata, long sections split
// on paragraph boundaries with the heading repeated; a heading without a
// body is covered by the sections below it, and a file of headings alone
// is one section per heading); each section is
// analyzed into terms (tokenize.go, analyze.go: Unicode words, lowercase,
// stop words, Snowball English stems, identifiers also as their parts);
// terms go into an inverted index whose postings hold, per chunk, the
// term's frequency in the body and its weighted count in the heading field
// (own heading, enclosing headings, the file's title; chunkterms.go).
// Searches score with BM25F over the two fields (score.go, rank.go); a
// query's adjacent words are also looked up joined, as the identifier they
// may name ("fill struct" finds fillStruct; expansion.go). The choices were
// measured on the relevance suite (testdata/relevance, docs/benchmarks.md).
//
// # Concurrency
//
// Searches read an immutable snapshot through an atomic pointer; every
// change (the catch-up after Open, each Apply) builds a new snapshot under
// the index's write lock, writes the same change to the store in one
// transaction and swaps the snapshot in, so a search sees a change whole or
// not at all.
//
// # Stored layout
//
// The durable copy lives in the store area data/<project id>/index. It is
// derived data: when it is corrupt (every value carries a CRC-32C) or of
// another format it is dropped and rebuilt from the files.
//
//	index/
//	  meta/       format     -> uint32 BE index format (layout and analyzer version)
//	              next_chunk -> uvarint: the lowest chunk id never used
//	              updated_at -> RFC 3339 time of the last change
//	  files/      <path relative to the root> -> size, mtime, SHA-256 prefix,
//	              skip reason, chunk ids
//	  chunks/     <chunk id, uint32 BE> -> heading path, lines, body offset,
//	              body and heading field lengths, front matter title, tags,
//	              workflow phase, token estimate, the text's length and
//	              CRC-32C (its file is the entry that names it)
//	  texts/      <chunk id, uint32 BE> -> the section's text
//	  postings/   <term> -> count, then (chunk id delta, body tf, heading
//	              count) uvarint triples
//
// Each value ends with a CRC-32C (big endian) of the bytes before it.
// Opening copies the sections' records into a few large slabs whose strings
// the sections share (load.go), but not their texts: a search reads the
// texts it needs (the sections it returns, those it checks a phrase in) a
// batch per short read transaction, each checked against the length and
// CRC-32C of its record (texts.go). It decodes no posting list: the terms,
// in key order, become the first term ids (one string, searched by
// bisection) and the lists stay encoded, each checked as it is copied
// (checkPostings, keeping nothing) and decoded on its first search
// (stored.go); a damaged one drops the stored index, rebuilt from the
// files. The sources are walked meanwhile (each folder's files stated
// relative to the open folder, a few folders in parallel). A catch-up that
// changed anything leaves the postings in the same form before the first
// search (compact, stored.go), so that a built index holds them as
// compactly as a reopened one.
// Freed chunk ids are reused; a file's entry lists its chunk ids, so a
// changed file's old postings are found by analyzing its old chunks again.
package search
