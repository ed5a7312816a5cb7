"""Re-embedding every chunk with another model, online, and the live model it switches."""
