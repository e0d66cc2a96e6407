"""muh: one spec for hardware, CUB-style algorithm policies and LLM-serving deployment."""

__version__ = "0.1.0"
