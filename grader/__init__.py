"""gradekit: property-based grading of hand-written Transformers against a verified reference."""

__version__ = "0.1.0"
