"""The model layer's tests need no Blender: numpy and the core only."""

from model_fixtures import piston_moved, rotated_child  # noqa: F401
