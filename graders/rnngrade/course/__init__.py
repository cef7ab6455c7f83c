"""Running a course: the course file (schedule, late policy, extensions, scaling), submission
times, the staff's overrides, and the feedback handed back to students."""
