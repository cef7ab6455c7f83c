"""Generating what students receive from the reference solutions."""
