// Package index holds the inverted index of isotsdb: postings lists and
// their lazy set operations, the in-memory postings of the head
// (MemPostings), the evaluation of label matchers against any postings
// source (PostingsForMatchers), and the block index file (Writer, Reader).
//
// The index file is byte-compatible with version 2 of Prometheus's TSDB
// index format (tsdb/docs/format/index.md in prometheus/prometheus). Its
// layout, all integers big-endian unless marked varint:
//
//	magic 0xBAAAD700 <4b> | version 2 <1b>
//	symbol table   len <4b> | count <4b> | (uvarint len, bytes)* | crc32c <4b>
//	series         each entry 16-byte aligned: uvarint len | body | crc32c <4b>
//	postings       each 4-byte aligned: len <4b> | count <4b> | ref <4b>* | crc32c
//	postings table len <4b> | count <4b> | (2, name, value, uvarint offset)* | crc32c
//	TOC            six 8-byte section offsets | crc32c <4b>
//
// A series is referred to by its offset in the file divided by 16; postings
// lists hold these references in increasing order, which is also the order
// of the series' label sets. The label index sections of the original v1/v2
// format are not written: no reader of version 2 uses them, and Prometheus
// itself stopped writing them; their TOC entries point at the postings
// section and the postings table as Prometheus's do. Readers accept version
// 2 and version 3 files (version 3 only declares that those sections are
// absent; everything else is identical).
package index
