-- Search indexes, apart from the tables so a large import can load rows first.
-- HNSW over cosine distance (pgvector); project-filtered queries use iterative scans
-- (hnsw.iterative_scan = relaxed_order, set per query) so a filter never starves the result.
CREATE INDEX cc_vectors_hnsw ON cc_vectors USING hnsw (embedding vector_cosine_ops);
-- Prefix walks of a field's vocabulary (word forms of a stem), as Tantivy's terms_with_prefix.
CREATE INDEX cc_term_df_prefix ON cc_term_df (project_id, field, term text_pattern_ops);
-- Path-prefix filters (`--path-prefix`).
CREATE INDEX cc_tree_path_prefix ON cc_tree (project_id, path text_pattern_ops);
