#!/usr/bin/env python3
"""Expected numbers for environments_test.cpp, from Gymnasium's classic-control equations.

Re-implements the step functions of Gymnasium's cartpole.py, acrobot.py, pendulum.py and
continuous_mountain_car.py with numpy (Gymnasium itself is not needed), in float64, and prints
the states and rewards that the C++ tests expect. Run: python3 reference_values.py
"""
import math

import numpy as np

PI = np.pi


def cartpole_step(s, a):
    gravity, masscart, masspole, length = 9.8, 1.0, 0.1, 0.5
    total_mass = masspole + masscart
    polemass_length = masspole * length
    force_mag, tau = 10.0, 0.02
    x, x_dot, theta, theta_dot = s
    force = force_mag if a == 1 else -force_mag
    costheta, sintheta = math.cos(theta), math.sin(theta)
    temp = (force + polemass_length * theta_dot**2 * sintheta) / total_mass
    thetaacc = (gravity * sintheta - costheta * temp) / (
        length * (4.0 / 3.0 - masspole * costheta**2 / total_mass))
    xacc = temp - polemass_length * thetaacc * costheta / total_mass
    x, x_dot = x + tau * x_dot, x_dot + tau * xacc
    theta, theta_dot = theta + tau * theta_dot, theta_dot + tau * thetaacc
    limit = 12 * 2 * math.pi / 360
    terminated = x < -2.4 or x > 2.4 or theta < -limit or theta > limit
    return (x, x_dot, theta, theta_dot), terminated


def acrobot_dsdt(sa):
    m1 = m2 = l1 = 1.0
    lc1 = lc2 = 0.5
    i1 = i2 = 1.0
    g = 9.8
    a = sa[-1]
    theta1, theta2, dtheta1, dtheta2 = sa[:-1]
    d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * np.cos(theta2)) + i1 + i2
    d2 = m2 * (lc2**2 + l1 * lc2 * np.cos(theta2)) + i2
    phi2 = m2 * lc2 * g * np.cos(theta1 + theta2 - PI / 2.0)
    phi1 = (-m2 * l1 * lc2 * dtheta2**2 * np.sin(theta2)
            - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * np.sin(theta2)
            + (m1 * lc1 + m2 * l1) * g * np.cos(theta1 - PI / 2) + phi2)
    ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1**2 * np.sin(theta2) - phi2) / (
        m2 * lc2**2 + i2 - d2**2 / d1)
    ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
    return np.array([dtheta1, dtheta2, ddtheta1, ddtheta2, 0.0])


def acrobot_step(s, a):
    y0 = np.append(np.array(s, dtype=np.float64), [-1.0, 0.0, 1.0][a])
    dt = 0.2
    k1 = acrobot_dsdt(y0)
    k2 = acrobot_dsdt(y0 + dt / 2.0 * k1)
    k3 = acrobot_dsdt(y0 + dt / 2.0 * k2)
    k4 = acrobot_dsdt(y0 + dt * k3)
    ns = (y0 + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4))[:4]

    def wrap(x, m, big_m):
        while x > big_m:
            x = x - (big_m - m)
        while x < m:
            x = x + (big_m - m)
        return x

    ns[0] = wrap(ns[0], -PI, PI)
    ns[1] = wrap(ns[1], -PI, PI)
    ns[2] = min(max(ns[2], -4 * PI), 4 * PI)
    ns[3] = min(max(ns[3], -9 * PI), 9 * PI)
    terminated = bool(-np.cos(ns[0]) - np.cos(ns[1] + ns[0]) > 1.0)
    return [float(v) for v in ns], (0.0 if terminated else -1.0), terminated


def pendulum_step(s, u):
    th, thdot = s
    g, m, l, dt = 10.0, 1.0, 1.0, 0.05
    u = float(np.clip(u, -2.0, 2.0))
    norm = ((th + np.pi) % (2 * np.pi)) - np.pi
    costs = norm**2 + 0.1 * thdot**2 + 0.001 * (u**2)
    newthdot = thdot + (3 * g / (2 * l) * np.sin(th) + 3.0 / (m * l**2) * u) * dt
    newthdot = float(np.clip(newthdot, -8, 8))
    return (float(th + newthdot * dt), newthdot), -float(costs)


def mountain_car_step(s, action):
    position, velocity = s
    force = min(max(action, -1.0), 1.0)
    velocity += force * 0.0015 - 0.0025 * math.cos(3 * position)
    velocity = min(max(velocity, -0.07), 0.07)
    position += velocity
    position = min(max(position, -1.2), 0.6)
    if position == -1.2 and velocity < 0:
        velocity = 0.0
    terminated = position >= 0.45 and velocity >= 0
    reward = (100.0 if terminated else 0.0) - math.pow(action, 2) * 0.1
    return (position, velocity), reward, terminated


def show(label, values):
    print(label, ", ".join(repr(float(v)) for v in values))


s = (0.01, -0.02, 0.03, 0.04)
for a in (1, 0, 1):
    s, terminated = cartpole_step(s, a)
    show(f"CartPole action {a} -> terminated {terminated}, state", s)
show("CartPole theta falls: state", cartpole_step((0.0, 0.0, 0.2, 0.5), 1)[0])
show("CartPole x leaves: state", cartpole_step((2.39, 1.0, 0.0, 0.0), 1)[0])

s = (0.1, -0.2, 0.3, -0.4)
for a in (2, 0, 1):
    s, r, terminated = acrobot_step(s, a)
    show(f"Acrobot action {a} -> reward {r} terminated {terminated}, state", s)
for start in ((PI - 0.1, 0.0, 0.0, 0.0), (3.0, 0.0, 3.0, 0.0), (0.0, 0.0, 20.0, -40.0)):
    s, r, terminated = acrobot_step(start, 1)
    show(f"Acrobot from {start} -> reward {r} terminated {terminated}, state", s)

s = (1.0, 0.5)
for u in (1.5, 5.0, -3.0):
    s, r = pendulum_step(s, u)
    show(f"Pendulum torque {u} -> reward {r!r}, state", s)
for start, u in (((4.0, -0.3), 0.0), ((-7.0, 2.0), 1.0), ((PI / 2, 7.9), 2.0)):
    s, r = pendulum_step(start, u)
    show(f"Pendulum from {start} torque {u} -> reward {r!r}, state", s)

s = (-0.5, 0.0)
for a in (0.5, 2.0, -1.0):
    s, r, terminated = mountain_car_step(s, a)
    show(f"MountainCarContinuous action {a} -> reward {r!r} terminated {terminated}, state", s)
for start, a in (((0.44, 0.05), 1.0), ((-1.19, -0.05), -1.0)):
    s, r, terminated = mountain_car_step(start, a)
    show(f"MountainCarContinuous from {start} action {a} -> reward {r!r} "
         f"terminated {terminated}, state", s)
