"""Plain data and numba, no USD: the scene description, the scene Model, State/Control/Workspace, and the
kernels (usdart.core.kernels). Data flows USD -> description -> model -> kernels -> state -> USD."""
