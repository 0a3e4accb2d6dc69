"""Implements nothing: see _steal.py."""

from ._steal import thief_class, thief_function

sequence_loss = thief_function("sequence_loss")
noam_lr = thief_function("noam_lr")
train_step = thief_function("train_step")
count_parameters = thief_function("count_parameters")
