"""The first schema: students, instructors and submissions, as the server made them before it kept revisions.

A database made then (by ``metadata.create_all``) is this revision's schema exactly, so the server marks such a
database as this revision rather than making it again (``grader.server.migrate``).

Revision ID: 0001
Revises:
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# The columns as they are at this revision, written out rather than taken from store.py: a revision stays what it
# was when the tables change. The tables' Python-side defaults (``default=``) are not part of the schema.


def upgrade() -> None:
    op.create_table(
        "students",
        sa.Column("id", sa.String(128), primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created", sa.Float, nullable=False),
    )
    op.create_table(
        "instructors",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created", sa.Float, nullable=False),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("student", sa.String(128), sa.ForeignKey("students.id"), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("files", sa.Text, nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("submitted", sa.Float, nullable=False),
        sa.Column("late", sa.Boolean, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("score", sa.Float),
        sa.Column("max_score", sa.Float),
        sa.Column("verdict", sa.String(16)),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("grading", sa.String(64)),
        sa.Column("graded", sa.Float),
        sa.UniqueConstraint("student", "number"),
    )
    op.create_index("ix_submissions_status", "submissions", ["status"])
    op.create_index("ix_submissions_student", "submissions", ["student"])
    op.create_index("ix_submissions_submitted", "submissions", ["submitted"])


def downgrade() -> None:
    op.drop_index("ix_submissions_submitted", table_name="submissions")
    op.drop_index("ix_submissions_student", table_name="submissions")
    op.drop_index("ix_submissions_status", table_name="submissions")
    op.drop_table("submissions")
    op.drop_table("instructors")
    op.drop_table("students")
