"""patchkit: keep downstream source patches for vLLM and FlashInfer alive."""

__version__ = "0.1.0"
