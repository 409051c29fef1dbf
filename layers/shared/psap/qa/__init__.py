"""Quality assurance: a user's evaluations (Spring-style page) and their imports."""
