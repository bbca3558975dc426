"""What-if: a cluster read into a file, and questions asked of a copy of it."""
