"""Python modules shipped into the image as they are (their data beside them): the vLLM plugin package's
(compat.py), the start-time chat-template script (chat_template.py) and the tool-call parser plugins
(parser_<name>.py)."""
