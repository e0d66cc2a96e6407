"""Python modules shipped into the image's vLLM plugin package as they are (their data beside them)."""
