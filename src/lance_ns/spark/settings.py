"""Settings the Spark modules share (here, so that neither imports the other for them)."""

#: Arrow Java's bounds and null checks off (see session.DEFAULT_CONF), for driver and executors.
ARROW_FLAGS = "-Darrow.enable_unsafe_memory_access=true -Darrow.enable_null_check_for_get=false"
