"""Running the patches' own tests and keeping their records: where they ran (env), how (run), what came out (records)."""
