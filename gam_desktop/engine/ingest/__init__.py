"""Documents in, memories out: reading PDF/TXT/Markdown, chunking, memorizing each chunk
with the LLM, planning the taxonomy (or grouping without it), placing new memories and
reorganizing full folders, and the estimate before spending."""
