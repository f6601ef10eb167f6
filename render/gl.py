"""The OpenGL renderer: moderngl on a headless EGL context (Mesa llvmpipe without a GPU).

Passes per view: a shadow map from the key light, the shaded HDR image (GGX / Cook-Torrance
specular, Lambert diffuse, PCF soft shadows, fill and hemisphere light, a simple studio
environment for glossy reflections) and an ID buffer (facelet index + 1 per pixel).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from judgecam.render.camera import CV_TO_GL, gl_projection
from judgecam.render.mesh import Mesh

logger = logging.getLogger(__name__)

_VERTEX = """
#version 330
uniform mat4 view_proj;
in vec3 in_pos; in vec3 in_normal; in vec3 in_albedo; in vec2 in_uv; in vec4 in_mat;
out vec3 v_pos; out vec3 v_normal; out vec3 v_albedo; out vec2 v_uv; out vec4 v_mat;
void main() {
    v_pos = in_pos; v_normal = in_normal; v_albedo = in_albedo; v_uv = in_uv; v_mat = in_mat;
    gl_Position = view_proj * vec4(in_pos, 1.0);
}
"""

_SHADE = """
#version 330
uniform sampler2DShadow shadow_map;
uniform mat4 light_view_proj;
uniform sampler2D tex_mat;
uniform sampler2D tex_table;
uniform vec3 cam_pos;
uniform vec3 key_pos; uniform vec3 key_color; uniform float key_size;
uniform vec3 fill_dir; uniform vec3 fill_color;
uniform vec3 sky_color; uniform vec3 ground_color;
uniform vec3 panel_dir; uniform vec3 panel_color;
uniform float shadow_texel;
uniform float shadow_extent;  // mm across the shadow map
uniform float shadow_depth_range;  // mm from the near to the far plane of the shadow map
uniform vec4 contact;  // x, y, z of the surface the puzzle rests on, footprint radius (mm)
in vec3 v_pos; in vec3 v_normal; in vec3 v_albedo; in vec2 v_uv; in vec4 v_mat;
out vec4 frag;
const float PI = 3.14159265;
const vec2 POISSON[16] = vec2[](
    vec2(-0.94201624, -0.39906216), vec2(0.94558609, -0.76890725),
    vec2(-0.09418410, -0.92938870), vec2(0.34495938, 0.29387760),
    vec2(-0.91588581, 0.45771432), vec2(-0.81544232, -0.87912464),
    vec2(-0.38277543, 0.27676845), vec2(0.97484398, 0.75648379),
    vec2(0.44323325, -0.97511554), vec2(0.53742981, -0.47373420),
    vec2(-0.26496911, -0.41893023), vec2(0.79197514, 0.19090188),
    vec2(-0.24188840, 0.99706507), vec2(-0.81409955, 0.91437590),
    vec2(0.19984126, 0.78641367), vec2(0.14383161, -0.14100790));

float ggx_d(float nh, float a) {
    float a2 = a * a;
    float d = nh * nh * (a2 - 1.0) + 1.0;
    return a2 / (PI * d * d);
}
float smith_g(float nv, float nl, float a) {
    float k = (a + 1.0) * (a + 1.0) / 8.0;
    return (nv / (nv * (1.0 - k) + k)) * (nl / (nl * (1.0 - k) + k));
}
vec3 fresnel(float c, vec3 f0) { return f0 + (1.0 - f0) * pow(1.0 - c, 5.0); }

vec3 brdf(vec3 n, vec3 v, vec3 l, vec3 albedo, float rough, vec3 f0) {
    float nl = max(dot(n, l), 0.0);
    if (nl <= 0.0) return vec3(0.0);
    float nv = max(dot(n, v), 1e-4);
    vec3 h = normalize(v + l);
    float a = rough * rough;
    vec3 f = fresnel(max(dot(h, v), 0.0), f0);
    vec3 spec = ggx_d(max(dot(n, h), 0.0), a) * smith_g(nv, nl, a) * f / (4.0 * nv * nl + 1e-4);
    vec3 diff = (1.0 - f) * albedo / PI;
    return (diff + spec) * nl;
}

float shadow(vec3 n, vec3 l) {
    // normal offset against acne; Poisson-disc PCF rotated per pixel so a wide penumbra
    // becomes fine noise that supersampling averages out
    vec4 lp = light_view_proj * vec4(v_pos + n * 0.4, 1.0);
    vec3 p = lp.xyz / lp.w * 0.5 + 0.5;
    if (p.x < 0.0 || p.x > 1.0 || p.y < 0.0 || p.y > 1.0 || p.z > 1.0) return 1.0;
    float a = 6.2831853 * fract(sin(dot(gl_FragCoord.xy, vec2(12.9898, 78.233))) * 43758.5453);
    mat2 rot = mat2(cos(a), sin(a), -sin(a), cos(a));
    // slope-scaled bias: across the filter radius a tilted surface changes depth by
    // radius * tan(angle to the light); without it wide filters shadow flat surfaces
    float c = clamp(dot(n, l), 0.05, 1.0);
    float radius_mm = key_size * shadow_texel * shadow_extent;
    float bias_mm = 0.6 + min(radius_mm * sqrt(1.0 - c * c) / c, 40.0);
    float bias = bias_mm / shadow_depth_range;
    float lit = 0.0;
    for (int i = 0; i < 16; i++) {
        vec2 o = rot * POISSON[i] * shadow_texel * key_size;
        lit += texture(shadow_map, vec3(p.xy + o, p.z - bias));
    }
    return lit / 16.0;
}

vec3 environment(vec3 r, float rough) {
    // the room (sky above, ground below) and a bright lamp or window ~12 degrees across,
    // seen through a lobe that widens with roughness (energy spread over the wider lobe)
    float up = clamp(r.z * 0.5 + 0.5, 0.0, 1.0);
    vec3 env = mix(ground_color, sky_color, up);
    float radius = 0.21;
    float blur = max(0.01, rough * rough * 0.8);
    float angle = acos(clamp(dot(r, panel_dir), -1.0, 1.0));
    float panel = smoothstep(radius + blur, radius - blur, angle)
        * radius * radius / (radius * radius + blur * blur);
    return env + panel * panel_color;
}

void main() {
    vec3 albedo = v_albedo;
    int tex = int(v_mat.z + 0.5);
    if (tex == 1) albedo *= texture(tex_mat, v_uv).rgb;
    if (tex == 2) albedo *= texture(tex_table, v_uv).rgb;
    float rough = clamp(v_mat.x, 0.05, 1.0);
    vec3 f0 = vec3(v_mat.y);
    vec3 n = length(v_normal) > 1e-6 ? normalize(v_normal) : vec3(0.0, 0.0, 1.0);
    vec3 v = normalize(cam_pos - v_pos);
    if (dot(n, v) < 0.0) n = -n;  // thin or back-facing geometry seen from behind
    vec3 l = normalize(key_pos - v_pos);
    vec3 color = brdf(n, v, l, albedo, rough, f0) * key_color * shadow(n, l);
    // contact shading: the puzzle hides most of the sky from the mat right around it
    float occlusion = 1.0;
    if (contact.w > 0.0 && n.z > 0.5 && abs(v_pos.z - contact.z) < 1.5) {
        float d = length(v_pos.xy - contact.xy);
        occlusion = 1.0 - 0.65 * (1.0 - smoothstep(0.6 * contact.w, 1.5 * contact.w, d));
    }
    float hemi = clamp(n.z * 0.5 + 0.5, 0.0, 1.0);
    color += albedo * mix(ground_color, sky_color, hemi) * occlusion;
    color += brdf(n, v, normalize(fill_dir), albedo, max(rough, 0.3), f0) * fill_color
        * (0.4 + 0.6 * occlusion);
    vec3 r = reflect(-v, n);
    float gloss = (1.0 - rough) * (1.0 - rough);
    color += fresnel(max(dot(n, v), 0.0), f0) * environment(r, rough) * gloss;
    if (any(isnan(color)) || any(isinf(color))) color = vec3(0.0);
    frag = vec4(color, 1.0);
}
"""

_ID = """
#version 330
in vec3 v_pos; in vec3 v_normal; in vec3 v_albedo; in vec2 v_uv; in vec4 v_mat;
out float frag_id;
void main() { frag_id = v_mat.w; }
"""

_DEPTH_VERTEX = """
#version 330
uniform mat4 light_view_proj;
in vec3 in_pos;
void main() { gl_Position = light_view_proj * vec4(in_pos, 1.0); }
"""

_DEPTH_FRAGMENT = """
#version 330
void main() { }
"""

_COUNTS = (3, 3, 3, 2, 4)
#: The key light's shadow map covers +-SHADOW_HALF_MM around the puzzle, +-SHADOW_DEPTH_MM deep.
SHADOW_HALF_MM = 350.0
SHADOW_DEPTH_MM = 700.0
_ATTRS = ("in_pos", "in_normal", "in_albedo", "in_uv", "in_mat")


@dataclass(frozen=True)
class Lighting:
    """Lights of one scene, linear RGB radiance already scaled by brightness."""

    key_position: NDArray[np.float64]  # mm, world
    key_color: NDArray[np.float64]
    key_size: float  # PCF radius in shadow-map texels: larger = softer shadows
    fill_direction: NDArray[np.float64]
    fill_color: NDArray[np.float64]
    sky_color: NDArray[np.float64]
    ground_color: NDArray[np.float64]
    panel_direction: NDArray[np.float64]
    panel_color: NDArray[np.float64]
    contact: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # x, y, z, radius (mm)


@dataclass(frozen=True)
class PinholeView:
    """An undistorted pinhole render target: intrinsics, size and world-from-camera (OpenCV)."""

    fx: float
    fy: float
    cx: float
    cy: float
    width: int
    height: int
    world_from_camera: NDArray[np.float64]


class Renderer:
    """Owns one headless GL context and its programs; renders meshes for many views."""

    def __init__(self, shadow_size: int = 2048) -> None:
        import moderngl

        self._moderngl = moderngl
        self.ctx = moderngl.create_standalone_context(backend="egl")  # type: ignore[arg-type]
        self.shade: Any = self.ctx.program(vertex_shader=_VERTEX, fragment_shader=_SHADE)
        self.ids: Any = self.ctx.program(vertex_shader=_VERTEX, fragment_shader=_ID)
        self.depth: Any = self.ctx.program(
            vertex_shader=_DEPTH_VERTEX, fragment_shader=_DEPTH_FRAGMENT
        )
        self.shadow_size = shadow_size
        self.shadow_tex = self.ctx.depth_texture((shadow_size, shadow_size))
        self.shadow_tex.compare_func = "<="
        self.shadow_tex.repeat_x = self.shadow_tex.repeat_y = False
        self.shadow_fbo = self.ctx.framebuffer(depth_attachment=self.shadow_tex)
        self._textures: dict[str, Any] = {}
        logger.debug("GL renderer: %s", self.ctx.info["GL_RENDERER"])

    def release(self) -> None:
        self.ctx.release()

    def set_texture(self, name: str, image_rgb_linear: NDArray[np.float32]) -> None:
        """Upload an (H, W, 3) float texture (linear albedo multiplier) as `tex_mat`/`tex_table`."""
        old = self._textures.pop(name, None)
        if old is not None:
            old.release()
        img = np.ascontiguousarray(image_rgb_linear[::-1], dtype=np.float32)
        tex = self.ctx.texture((img.shape[1], img.shape[0]), 3, img.tobytes(), dtype="f4")
        tex.build_mipmaps()
        tex.filter = (self._moderngl.LINEAR_MIPMAP_LINEAR, self._moderngl.LINEAR)
        tex.anisotropy = 8.0
        self._textures[name] = tex

    def _vao(self, program: Any, buffer: Any, depth_only: bool = False) -> Any:
        """A vertex array over the interleaved layout, skipping attributes the GLSL compiler
        optimised away (they become padding)."""
        formats, names = [], []
        for count, name in zip(_COUNTS, _ATTRS, strict=True):
            if name in program and not (depth_only and name != "in_pos"):
                formats.append(f"{count}f")
                names.append(name)
            else:
                formats.append(f"{4 * count}x")
        return self.ctx.vertex_array(program, [(buffer, " ".join(formats), *names)])

    def render(
        self, mesh: Mesh, view: PinholeView, lighting: Lighting, supersample: int = 2
    ) -> tuple[NDArray[np.float32], NDArray[np.int32]]:
        """The linear HDR image (H*s, W*s, 3) and the ID image (H, W) of `mesh` seen by `view`.

        The image is rendered `supersample` times larger for antialiasing (the caller
        area-averages it); the ID buffer is at 1x with no antialiasing (one id per pixel).
        """
        ctx = self.ctx
        data = mesh.interleaved()
        buffer = ctx.buffer(data.tobytes())
        light_vp = self._light_view_proj(mesh, lighting)
        try:
            # 1) shadow map from the key light
            self.shadow_fbo.use()
            self.shadow_fbo.clear(depth=1.0)
            ctx.enable(self._moderngl.DEPTH_TEST)
            ctx.disable(self._moderngl.CULL_FACE)
            self.depth["light_view_proj"].write(light_vp.T.astype("f4").tobytes())
            vao = self._vao(self.depth, buffer, depth_only=True)
            vao.render()
            vao.release()

            # 2) shaded image
            s = supersample
            size = (view.width * s, view.height * s)
            color = ctx.renderbuffer(size, 4, dtype="f4")
            depth = ctx.depth_renderbuffer(size)
            fbo = ctx.framebuffer(color_attachments=[color], depth_attachment=depth)
            fbo.use()
            fbo.clear(0.0, 0.0, 0.0, 1.0, depth=1.0)
            vp = self._view_proj(view, s)
            prog = self.shade
            prog["view_proj"].write(vp.T.astype("f4").tobytes())
            prog["light_view_proj"].write(light_vp.T.astype("f4").tobytes())
            cam = view.world_from_camera[:3, 3]
            self._set(prog, "cam_pos", cam)
            self._set(prog, "key_pos", lighting.key_position)
            self._set(prog, "key_color", lighting.key_color)
            prog["key_size"].value = float(lighting.key_size)
            self._set(prog, "fill_dir", lighting.fill_direction)
            self._set(prog, "fill_color", lighting.fill_color)
            self._set(prog, "sky_color", lighting.sky_color)
            self._set(prog, "ground_color", lighting.ground_color)
            self._set(prog, "panel_dir", lighting.panel_direction)
            self._set(prog, "panel_color", lighting.panel_color)
            prog["shadow_texel"].value = 1.0 / self.shadow_size
            prog["shadow_extent"].value = 2 * SHADOW_HALF_MM
            prog["shadow_depth_range"].value = 2 * SHADOW_DEPTH_MM
            prog["contact"].value = tuple(float(c) for c in lighting.contact)
            self.shadow_tex.use(location=0)
            prog["shadow_map"].value = 0
            for loc, name in ((1, "tex_mat"), (2, "tex_table")):
                tex = self._textures.get(name)
                if tex is not None:
                    tex.use(location=loc)
                if name in prog:
                    prog[name].value = loc
            vao = self._vao(prog, buffer)
            vao.render()
            vao.release()
            raw = fbo.read(components=4, dtype="f4")
            image = np.frombuffer(raw, np.float32).reshape(size[1], size[0], 4)[::-1, :, :3]
            fbo.release()
            color.release()
            depth.release()

            # 3) ID buffer at 1x
            size1 = (view.width, view.height)
            idbuf = ctx.renderbuffer(size1, 1, dtype="f4")
            depth1 = ctx.depth_renderbuffer(size1)
            fbo = ctx.framebuffer(color_attachments=[idbuf], depth_attachment=depth1)
            fbo.use()
            fbo.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
            self.ids["view_proj"].write(self._view_proj(view, 1).T.astype("f4").tobytes())
            vao = self._vao(self.ids, buffer)
            vao.render()
            vao.release()
            raw = fbo.read(components=1, dtype="f4")
            ids = np.frombuffer(raw, np.float32).reshape(size1[1], size1[0])[::-1]
            fbo.release()
            idbuf.release()
            depth1.release()
        finally:
            buffer.release()
        return np.ascontiguousarray(image), np.rint(ids).astype(np.int32)

    @staticmethod
    def _set(prog: Any, name: str, value: NDArray[np.float64]) -> None:
        prog[name].value = tuple(float(x) for x in np.asarray(value).ravel())

    @staticmethod
    def _view_proj(view: PinholeView, scale: int) -> NDArray[np.float64]:
        fx, fy = view.fx * scale, view.fy * scale
        cx, cy = (view.cx + 0.5) * scale - 0.5, (view.cy + 0.5) * scale - 0.5
        proj = gl_projection(fx, fy, cx, cy, view.width * scale, view.height * scale, 20.0, 5000.0)
        gl_view = CV_TO_GL @ np.linalg.inv(view.world_from_camera)
        return proj @ gl_view

    @staticmethod
    def _light_view_proj(mesh: Mesh, lighting: Lighting) -> NDArray[np.float64]:
        """An orthographic view along the key light's direction framing the region near the
        puzzle (350 mm around the origin of the scene's light target): a lamp a metre away
        casts nearly parallel shadows, and linear depth keeps the bias uniform."""
        eye = np.asarray(lighting.key_position, np.float64)
        target = np.asarray(lighting.contact[:3], np.float64)
        forward = target - eye
        dist = float(np.linalg.norm(forward))
        forward /= dist
        up = np.array([0.0, 0.0, 1.0]) if abs(forward[2]) < 0.99 else np.array([0.0, 1.0, 0.0])
        right = np.cross(forward, up)
        right /= np.linalg.norm(right)
        true_up = np.cross(right, forward)
        view = np.eye(4)
        view[0, :3], view[1, :3], view[2, :3] = right, true_up, -forward
        view[:3, 3] = -view[:3, :3] @ eye
        half = SHADOW_HALF_MM
        near, far = dist - SHADOW_DEPTH_MM, dist + SHADOW_DEPTH_MM
        proj = np.array(
            [
                [1 / half, 0, 0, 0],
                [0, 1 / half, 0, 0],
                [0, 0, -2 / (far - near), -(far + near) / (far - near)],
                [0, 0, 0, 1],
            ]
        )
        del mesh
        return proj @ view
