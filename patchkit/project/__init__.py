"""The project's own files: ``upstream.lock``, ``patchsets/<name>/patchset.toml``, each patch's
metadata (``patches/<id>.toml``) and patch file, their ``[export]`` and ``[[bench]]`` settings.
They are read and written only here."""
