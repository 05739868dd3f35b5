"""`cowbird build`: web pages (WARC/ARC files, folders of HTML files) to a corpus in VRT and CWB partitions.

The stages are texrex's (the COW tool chain): read the inputs, decode each page to UTF-8 as browsers do,
cut it into blocks, decide boilerplate per block, identify the language and the connected-text quality
(badness), drop repeated paragraphs, drop exact and near-duplicate documents across the corpus, split
tokens and sentences, tag part of speech and lemma, write VRT and encode it into partitions. See
docs/building-corpora.md.
"""
