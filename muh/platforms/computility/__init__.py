"""Platform `computility`: the competition's (信创模盒 ModelHub XC). The platform builds the repository's root
``Dockerfile`` on the base image and runs the ``command`` of its root ``computility-run.yaml`` in a container
with the cards, the model's weights at ``/model`` (facts: ``platform.json``)."""
